// Types of node-check.js, which stays plain JavaScript so any Node can run it.
export declare const REQUIRED_MAJOR: number;
export declare function unsupportedNodeMessage(version: string, execPath: string): string | null;
export declare function requireSupportedNode(): void;
