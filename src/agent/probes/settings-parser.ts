/**
 * A probe's settings parser: the job's raw settings cloned (the job's own
 * object stays as the service sent it), defaults filled in, checked by a
 * validator compiled once per schema — every uptime job goes through this.
 */
import type { Static, TSchema } from 'typebox';
import { Compile } from 'typebox/compile';
import { InvalidSettingsError } from '../../errors/index.js';
import { describeSchemaErrors } from './settings-errors.js';

export function settingsParser<Schema extends TSchema>(schema: Schema, kind: string): (raw: unknown) => Static<Schema> {
  const validator = Compile(schema);
  return (raw) => {
    const value = validator.Default(structuredClone(raw));
    if (!validator.Check(value)) {
      throw new InvalidSettingsError(`Invalid ${kind} settings: ${describeSchemaErrors(schema, value)}`);
    }
    return value;
  };
}
