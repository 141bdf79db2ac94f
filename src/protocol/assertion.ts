import Type from 'typebox';
import { ASSERTION_COMPARISONS, ASSERTION_SOURCES } from './enums.js';

/** One assertion as a user writes it on a check; shared by every check type. */
export const AssertionSchema = Type.Object({
  source: Type.Enum(ASSERTION_SOURCES),
  property: Type.Optional(Type.String({ maxLength: 1024, default: '' })),
  comparison: Type.Enum(ASSERTION_COMPARISONS),
  target: Type.Optional(Type.String({ maxLength: 4096, default: '' })),
  regex: Type.Optional(Type.Union([Type.String({ maxLength: 1024 }), Type.Null()])),
});
export type Assertion = Type.Static<typeof AssertionSchema>;

/** How one assertion fared in a run. */
export const AssertionResultSchema = Type.Object({
  source: Type.String(),
  property: Type.String(),
  comparison: Type.String(),
  target: Type.String(),
  actual: Type.Union([Type.String(), Type.Number(), Type.Boolean(), Type.Null()]),
  passed: Type.Boolean(),
});
export type AssertionResult = Type.Static<typeof AssertionResultSchema>;
