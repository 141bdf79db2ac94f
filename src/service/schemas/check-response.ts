import type { FastifyReply, FastifyRequest } from 'fastify';
import Type, { type TObject, type TProperties } from 'typebox';
import { withoutDefaults, type CheckTypeDefinition } from '../check-types/common.js';
import { checkTypes } from '../check-types/index.js';
import { AlertChannelsSchema, CheckTypeNameSchema, DateTimeSchema } from './common.js';

/** What the service sets on every check, whatever its type. */
const ServiceFields = {
  id: Type.String({ format: 'uuid' }),
  checkType: CheckTypeNameSchema,
  name: Type.String(),
  activated: Type.Boolean(),
  muted: Type.Boolean(),
  frequency: Type.Integer(),
  locations: Type.Array(Type.String()),
  privateLocations: Type.Array(Type.String()),
  tags: Type.Array(Type.String()),
  alertChannels: AlertChannelsSchema,
  created_at: DateTimeSchema,
  updated_at: Type.Union([DateTimeSchema, Type.Null()]),
};

/** The fields of every check, as the code that builds an answer knows them. */
export const CheckResponseSchema = Type.Object(ServiceFields, { additionalProperties: true });
export type CheckResponse = Type.Static<typeof CheckResponseSchema>;

/**
 * A stored definition's fields as reads show them: every field a create takes
 * but those reads never show, without the defaults (they describe requests),
 * and optional, since a check stored by an older version may lack a newer field.
 */
export function definitionFields(createSchema: TObject, hidden: readonly string[] = []): TProperties {
  const fields: TProperties = {};
  for (const [name, schema] of Object.entries(createSchema.properties)) {
    if (!hidden.includes(name)) fields[name] = Type.Optional(withoutDefaults(schema));
  }
  return fields;
}

const titleOf = (type: CheckTypeDefinition) =>
  `${type.path === 'multistep' ? 'MultiStep' : type.path[0]!.toUpperCase() + type.path.slice(1)}Check`;

/** One check type's answer: its definition and what the service sets. */
export function checkResponseSchemaOf(type: CheckTypeDefinition): TObject {
  return Type.Object(
    {
      ...definitionFields(type.createSchema, type.requestOnlyFields),
      ...Type.Partial(Type.Object(type.storedFields ?? {})).properties,
      ...ServiceFields,
      checkType: Type.Unsafe<string>({ type: 'string', enum: [type.checkType] }),
    },
    { title: titleOf(type), additionalProperties: true },
  );
}

const byType = new Map(checkTypes.map((type) => [type.checkType, checkResponseSchemaOf(type)]));

/** A check of one type, as its create and update routes answer it. */
export function typedCheckResponseSchema(type: CheckTypeDefinition) {
  return Type.Unsafe<CheckResponse>(byType.get(type.checkType)!);
}

/** A check of any type, told apart by checkType. */
export const AnyCheckResponseSchema = Type.Unsafe<CheckResponse>(
  Type.Union([...byType.values()], { title: 'Check', description: 'A check of any type; checkType says which' }),
);

/**
 * A route hook: checks and groups are answered as the code builds them. A
 * stored definition is shown whole, and the schemas above describe every field
 * of it for clients; serialising through them would try each check type's branch
 * in turn with a validator, and answer 500 for a definition stored before a rule
 * tightened. Error answers keep their schema's serialiser.
 */
export function answerAsBuilt(_request: FastifyRequest, reply: FastifyReply, payload: unknown, done: (error: null, payload: unknown) => void): void {
  if (reply.statusCode < 300) reply.serializer(JSON.stringify);
  done(null, payload);
}
