import Type from 'typebox';
import { MAX_SCRIPT_CHARS } from '../../protocol/multistep-settings.js';
import { updateSchemaFor, type CheckTypeDefinition } from './common.js';
import { multiStepCheck } from './multistep.js';

/**
 * Browser check: one script driving a browser, as the comparable product's
 * browser checks are. The agent runs it exactly as a multi-step script (the
 * job carries the MULTI_STEP settings shape), with the same 240 s budget,
 * runtimes, dependencies and limits; only the type differs.
 */
const createSchema = Type.Object({
  ...multiStepCheck.createSchema.properties,
  checkType: Type.Optional(Type.Literal('BROWSER', { default: 'BROWSER' })),
  script: Type.String({
    minLength: 1,
    maxLength: MAX_SCRIPT_CHARS,
    description: 'Node.js code driving a browser (@playwright/test), run on the check\'s runtime',
  }),
});

export const browserCheck: CheckTypeDefinition = {
  ...multiStepCheck,
  checkType: 'BROWSER',
  path: 'browser',
  summary: 'Browser check: a script driving a browser, its steps, logs and traces',
  createSchema,
  updateSchema: updateSchemaFor(createSchema),
  crossFieldProblems: (definition) => {
    const problems = multiStepCheck.crossFieldProblems(definition);
    if (problems.runtimeId) problems.runtimeId = problems.runtimeId.replace('multi-step checks', 'browser checks');
    return problems;
  },
};
