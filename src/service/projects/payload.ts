import Type, { type Static } from 'typebox';

/**
 * What `checkly deploy` sends (ProjectBundle.synthesize): the project, the
 * files scripts share (referenced by index from a check's `dependencies`),
 * and every construct as a resource. A construct's payload is kept as sent
 * here; each kind's mapping validates it as the matching API route would.
 */
export const ResourceSchema = Type.Object({
  logicalId: Type.String({ minLength: 1, maxLength: 1024 }),
  type: Type.String({ minLength: 1, maxLength: 100 }),
  physicalId: Type.Optional(Type.Union([Type.String({ maxLength: 255 }), Type.Number(), Type.Null()])),
  member: Type.Boolean(),
  payload: Type.Unknown(),
  sourceFile: Type.Optional(Type.String({ maxLength: 4096 })),
});
export type Resource = Static<typeof ResourceSchema>;

export const SharedFileSchema = Type.Object({
  path: Type.String({ maxLength: 4096 }),
  content: Type.String(),
});
export type SharedFile = Static<typeof SharedFileSchema>;

export const ProjectPayloadSchema = Type.Object({
  project: Type.Object({
    logicalId: Type.String({ minLength: 1, maxLength: 255 }),
    name: Type.String({ minLength: 1, maxLength: 255 }),
    repoUrl: Type.Optional(Type.Union([Type.String({ maxLength: 2048 }), Type.Null()])),
  }),
  sharedFiles: Type.Optional(Type.Array(SharedFileSchema, { default: [] })),
  resources: Type.Array(ResourceSchema, { maxItems: 5000 }),
});
export type ProjectPayload = Static<typeof ProjectPayloadSchema>;

/** `{ ref: logicalId }`, as Ref.from() serialises a link to another construct of the project. */
export function refOf(value: unknown): string | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const ref = (value as { ref?: unknown }).ref;
  return typeof ref === 'string' ? ref : undefined;
}

/** How a refusal names a construct: its type, logical id and, for a check, its checkType. */
export function labelOf(resource: Resource): { type: string; logicalId: string; kind?: string } {
  const kind = (resource.payload as { checkType?: unknown } | null)?.checkType;
  return { type: resource.type, logicalId: resource.logicalId, ...(resource.type === 'check' && typeof kind === 'string' ? { kind } : {}) };
}
