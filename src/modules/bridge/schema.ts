// The bridge room's schemas: facts and brief statuses.
import { Type } from 'typebox';
import { Closed, Nullable } from '../../platform/contract/schema.ts';
import { BRIEF_STATUSES } from './briefs.ts';

export const Fact = Closed({ value: Nullable('integer'), source: Type.String(), computed_at: Type.String({ format: 'date-time' }) });
export const Status = Type.Unsafe<string>({ type: 'string', enum: [...BRIEF_STATUSES] });
