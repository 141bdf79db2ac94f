import net from 'node:net';
import Type, { type TObject } from 'typebox';
import { describeDenial, wellKnownAddresses, type DestinationPolicy } from '../../net-policy/index.js';
import { collapse } from '../http-errors.js';
import { compileBodyValidator } from '../validation.js';

export const CHANNEL_TYPES = ['EMAIL', 'WEBHOOK', 'SLACK', 'SMS'] as const;
export type ChannelType = (typeof CHANNEL_TYPES)[number];

const KeyValue = Type.Object({
  key: Type.String({ minLength: 1, maxLength: 255 }),
  value: Type.String({ maxLength: 4096 }),
  locked: Type.Optional(Type.Boolean({ default: false })),
});
const HttpUrl = (description: string) =>
  Type.String({ maxLength: 2048, pattern: '^https?://[^\\s]+$', description });

/** Each type's `config`, as the channel is created and as checks show it in alertChannels. */
export const CONFIG_SCHEMAS: Record<ChannelType, TObject> = {
  EMAIL: Type.Object({ address: Type.String({ format: 'email', maxLength: 254 }) }),
  WEBHOOK: Type.Object({
    name: Type.String({ minLength: 1, maxLength: 255 }),
    url: HttpUrl('Where alerts are sent'),
    method: Type.Optional(Type.Enum(['GET', 'POST', 'PUT', 'PATCH', 'DELETE'], { default: 'POST' })),
    headers: Type.Optional(Type.Array(KeyValue, { maxItems: 50, default: [] })),
    queryParameters: Type.Optional(Type.Array(KeyValue, { maxItems: 50, default: [] })),
  }),
  SLACK: Type.Object({ url: HttpUrl('The Slack incoming webhook URL') }),
  SMS: Type.Object({
    number: Type.String({ pattern: '^\\+[1-9][0-9]{6,14}$', description: 'E.164, e.g. +4915112345678' }),
    name: Type.String({ minLength: 1, maxLength: 255 }),
  }),
};

const validators = Object.fromEntries(
  CHANNEL_TYPES.map((type) => [type, compileBodyValidator(CONFIG_SCHEMAS[type])]),
) as Record<ChannelType, ReturnType<typeof compileBodyValidator>>;

/**
 * The config with its defaults filled in, or the problems by field under
 * `config.`. A URL the destination policy denies on its face (an IP literal,
 * or a name such as localhost that always means a denied address) is refused
 * here, so the caller hears of it now; names DNS resolves are judged when sent.
 */
export function parseChannelConfig(
  type: ChannelType,
  config: Record<string, unknown>,
  policy: DestinationPolicy,
): { config: Record<string, unknown> } | { problems: Record<string, string> } {
  const copy = structuredClone(config);
  const validate = validators[type];
  if (validate(copy)) {
    const refusal = typeof copy.url === 'string' ? urlRefusal(copy.url, policy) : undefined;
    return refusal === undefined ? { config: copy } : { problems: { 'config.url': refusal } };
  }
  const problems: Record<string, string> = {};
  for (const [field, problem] of Object.entries(collapse(validate.errors ?? []))) {
    problems[field === '(root)' ? 'config' : `config.${field}`] = problem;
  }
  return { problems };
}

function urlRefusal(url: string, policy: DestinationPolicy): string | undefined {
  let hostname: string;
  try {
    // WHATWG parsing turns the spellings of an address (0x7f.1, 2130706433, [::ffff:7f00:1]) into one.
    hostname = new URL(url).hostname;
  } catch {
    return 'must be a valid URL';
  }
  const bare = /^\[(.*)\]$/.exec(hostname)?.[1] ?? hostname;
  const literal = net.isIP(bare) !== 0;
  for (const address of literal ? [bare] : wellKnownAddresses(hostname)) {
    const verdict = policy.decide(address);
    if (verdict.allowed) continue;
    const named = literal ? '' : `${hostname} means ${address}, and `;
    return `must not point at a denied destination: ${named}${describeDenial(verdict)} (the service's webhook destination policy)`;
  }
  return undefined;
}
