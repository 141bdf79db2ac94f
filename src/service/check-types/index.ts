import type { CheckType } from '../../protocol/enums.js';
import type { CheckTypeDefinition } from './common.js';
import { apiCheck } from './api.js';
import { browserCheck } from './browser.js';
import { dnsCheck } from './dns.js';
import { icmpCheck } from './icmp.js';
import { multiStepCheck } from './multistep.js';
import { playwrightCheck } from './playwright.js';
import { tcpCheck } from './tcp.js';
import { urlCheck } from './url.js';

export type { CheckDefinition, CheckTypeDefinition, JobSpec } from './common.js';

/** Every check type the service can create and schedule. */
export const checkTypes: readonly CheckTypeDefinition[] = [urlCheck, tcpCheck, dnsCheck, icmpCheck, multiStepCheck, playwrightCheck, apiCheck, browserCheck];

const byType = new Map<string, CheckTypeDefinition>(checkTypes.map((type) => [type.checkType, type]));

export function checkTypeDefinition(checkType: CheckType): CheckTypeDefinition | undefined {
  return byType.get(checkType);
}
