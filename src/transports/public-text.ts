// The contract documents' section names are for engineers (source comments cite
// them); a published document says the rule itself. Issue 41: "(EXTENSIONS 6)"
// and "(SPEC)" leaked into the public OpenAPI. Applied to every document built.

/** A citation in parentheses: "(SPEC)", "(SPEC Errors)", "(EXTENSIONS 6)", "(GAPS Couriers 2)". */
const CITATION = /\s*\((?:SPEC|GAPS|EXTENSIONS|DESIGN|OPERATOR_API)\b[^()]*\)/g;

/** A citation opening a sentence: "EXTENSIONS 7: approval makes..." (the sentence then starts with its own words). */
const OPENING = /(^|\. )(?:SPEC|GAPS|EXTENSIONS|DESIGN|OPERATOR_API)(?: [\w-]+){0,3}: (\w)/g;

export const publicText = (text: string) =>
  text.replace(CITATION, '').replace(OPENING, (_all, before: string, first: string) => before + first.toUpperCase());

/** The value with every string in it rid of citations (keys are left as they are). */
export function withPublicText<T>(value: T): T {
  if (typeof value === 'string') return publicText(value) as T;
  if (Array.isArray(value)) return value.map(withPublicText) as T;
  if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, withPublicText(v)])) as T;
  return value;
}
