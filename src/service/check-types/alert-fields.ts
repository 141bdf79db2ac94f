import Type from 'typebox';

/*
 * How a check alerts, retries and opens incidents. The spec gives these
 * objects' fields but neither their bounds nor most of their values, so the
 * service checks each field's type and that counts are not negative, and
 * stores them as sent; where they are applied (src/service/alerts,
 * src/service/retry-strategy.ts) missing fields get defaults and caps.
 */

const Count = Type.Number({ minimum: 0 });

export const AlertSettingsSchema = Type.Object({
  escalationType: Type.Optional(Type.String({ minLength: 1, maxLength: 50, description: 'RUN_BASED is the value the spec names' })),
  runBasedEscalation: Type.Optional(Type.Object({ failedRunThreshold: Type.Optional(Count) })),
  reminders: Type.Optional(Type.Object({ amount: Type.Optional(Count), interval: Type.Optional(Count) })),
  parallelRunFailureThreshold: Type.Optional(
    Type.Object({
      enabled: Type.Optional(Type.Boolean()),
      percentage: Type.Optional(Type.Number({ minimum: 0, maximum: 100 })),
    }),
  ),
}, { title: 'AlertSettings' });

export const RetryStrategySchema = Type.Object({
  type: Type.Optional(
    Type.Enum(['FIXED', 'LINEAR', 'EXPONENTIAL', 'NO_RETRIES'], {
      description: 'How the wait grows between retries (see src/service/retry-strategy.ts); FIXED when left out',
    }),
  ),
  baseBackoffSeconds: Type.Optional(Count),
  sameRegion: Type.Optional(Type.Boolean()),
  maxRetries: Type.Optional(Count),
  maxDurationSeconds: Type.Optional(Count),
  onlyOn: Type.Optional(
    Type.Array(Type.String({ maxLength: 100 }), {
      maxItems: 20,
      description: 'Retry only failures of these kinds: NETWORK_ERROR, or error codes the agent reports; [] retries every failure',
    }),
  ),
});

export const TriggerIncidentSchema = Type.Object({
  serviceId: Type.Optional(Type.String({ maxLength: 255 })),
  name: Type.Optional(Type.String({ maxLength: 255 })),
  description: Type.Optional(Type.String({ maxLength: 2000 })),
  notifySubscribers: Type.Optional(Type.Boolean()),
});

export const AlertChannelSubscriptionSchema = Type.Object({
  alertChannelId: Type.Number(),
  activated: Type.Boolean(),
});
