import Type from 'typebox';
import { CHECK_TYPES } from '../../protocol/enums.js';

/** Data-center locations of the spec; a private location slug may not look like one. */
export const DATA_CENTER_LOCATIONS = [
  'us-east-1', 'us-east-2', 'us-west-1', 'us-west-2', 'ca-central-1', 'sa-east-1', 'eu-west-1',
  'eu-central-1', 'eu-west-2', 'eu-west-3', 'eu-north-1', 'eu-south-1', 'me-south-1', 'ap-southeast-1',
  'ap-northeast-1', 'ap-east-1', 'ap-southeast-2', 'ap-southeast-3', 'ap-northeast-2', 'ap-northeast-3',
  'ap-south-1', 'af-south-1',
] as const;
export const LocationSchema = Type.Enum(DATA_CENTER_LOCATIONS, { title: 'Location' });

export const FREQUENCIES = [1, 2, 5, 10, 15, 30, 60, 120, 180, 360, 720, 1440] as const;
export const frequencySchema = (defaultMinutes: (typeof FREQUENCIES)[number]) =>
  Type.Enum(FREQUENCIES, { description: 'Minutes between runs', default: defaultMinutes });

/** The spec's runtimeId set; which of them a check may use is the runtime catalog's to say. */
export const RUNTIME_IDS = ['2026.04', '2025.04', '2024.09', '2024.02', '2023.09', '2023.02', '2022.10'] as const;
export const RuntimeIdSchema = Type.Enum(RUNTIME_IDS);

/** A moment as the API writes it: an ISO 8601 timestamp, which generated clients turn into a date. */
export const DateTimeSchema = Type.String({ format: 'date-time' });

/**
 * A check type as records carry it (typed as a plain string in code), listed in the
 * document as the spec's enum so generated clients know the values.
 */
export const CheckTypeNameSchema = Type.Unsafe<string>({ type: 'string', enum: [...CHECK_TYPES], title: 'CheckType' });

export const SlugSchema = Type.String({ pattern: '^[a-z0-9][a-z0-9-]{0,49}$', description: 'lower-case slug' });

/** Error shape A: authentication, authorization and not-found answers. */
export const ErrorA = Type.Object(
  { statusCode: Type.Integer(), error: Type.String(), message: Type.String() },
  { title: 'Error', description: 'Authentication, authorization and not-found answers (and every error of some routes)' },
);
/** Error shape B: validation answers; attributes name each bad field. */
export const ErrorB = Type.Object(
  { message: Type.String(), attributes: Type.Record(Type.String(), Type.Unknown()) },
  { title: 'ErrorWithAttributes', description: 'Validation answers: attributes name each bad field' },
);

export const IdParams = Type.Object({ id: Type.String({ format: 'uuid' }) });

export const Pagination = Type.Object({
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 10 })),
  page: Type.Optional(Type.Integer({ minimum: 1, default: 1 })),
});

const KeyValueSchema = Type.Object({ key: Type.String(), value: Type.String() }, { title: 'KeyValue' });

export const AlertChannelsSchema = Type.Object(
  {
    email: Type.Array(Type.Object({ address: Type.String() })),
    webhook: Type.Array(
      Type.Object({
        url: Type.String(),
        name: Type.String(),
        method: Type.Optional(Type.String()),
        headers: Type.Optional(Type.Array(KeyValueSchema)),
        queryParameters: Type.Optional(Type.Array(KeyValueSchema)),
      }),
    ),
    slack: Type.Array(Type.Object({ url: Type.String() })),
    sms: Type.Array(Type.Object({ number: Type.String(), name: Type.String() })),
  },
  { title: 'CheckAlertChannels', description: 'The channels the check alerts, by kind' },
);
