import { parseChannelConfig, type ChannelType } from '../alerts/channel-config.js';
import { invalidBodyMessage } from '../http-errors.js';
import { createChannel, getChannel, updateChannel, type ChannelInput } from '../store/alert-channels.js';
import { ConstructInvalidError } from './construct-invalid-error.js';
import type { DeployScope } from './deploy.js';
import type { Resource } from './payload.js';

interface ChannelPayload {
  type: ChannelType;
  config?: Record<string, unknown>;
  sendFailure?: boolean;
  sendRecovery?: boolean;
  sendDegraded?: boolean;
}

/**
 * An alert channel construct becomes the channel POST /v1/alert-channels
 * would create, with the same config rules; checks subscribe to it through
 * their subscriptions, never automatically.
 */
export async function applyChannel(scope: DeployScope, resource: Resource): Promise<{ physicalId: number; created: boolean }> {
  const { tx, accountId } = scope;
  const payload = resource.payload as ChannelPayload;
  const label = { type: resource.type, logicalId: resource.logicalId, kind: payload.type };
  const parsed = parseChannelConfig(payload.type, payload.config ?? {}, scope.ctx.webhookPolicy);
  if ('problems' in parsed) throw new ConstructInvalidError(label, invalidBodyMessage(parsed.problems), parsed.problems);
  const input: ChannelInput = {
    type: payload.type,
    config: parsed.config,
    sendFailure: payload.sendFailure ?? true,
    sendRecovery: payload.sendRecovery ?? true,
    sendDegraded: payload.sendDegraded ?? false,
    autoSubscribe: false,
  };
  const previousId = scope.previous('alert-channel', resource.logicalId);
  const stored = previousId === undefined ? undefined : await getChannel(tx, accountId, Number(previousId));
  if (stored) {
    const row = await updateChannel(tx, accountId, stored.id, input);
    return { physicalId: row!.id, created: false };
  }
  return { physicalId: (await createChannel(tx, accountId, input)).id, created: true };
}
