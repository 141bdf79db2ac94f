import { DnsRequestSchema, DnsSettingsSchema } from '../../protocol/dns-settings.js';
import { responseTimeCheck } from './response-time.js';

export const dnsCheck = responseTimeCheck({
  checkType: 'DNS',
  path: 'dns',
  summary: 'DNS monitor: one query to a name server, its answer and response code',
  request: DnsRequestSchema,
  settings: DnsSettingsSchema,
});
