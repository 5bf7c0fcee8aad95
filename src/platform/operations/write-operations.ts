// Issue 41: the names of the write operations, for the request log's `writes`
// filter. defineOperation() adds each as its module loads, before any request;
// a module of its own so that the request log reads it without importing the
// operation machinery (which imports the services the log is part of).
const writeNames = new Set<string>();

export function noteWriteOperation(name: string): void {
  writeNames.add(name);
}

export const writeOperationNames = (): string[] => [...writeNames];
