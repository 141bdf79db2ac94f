import { TcpRequestSchema, TcpSettingsSchema } from '../../protocol/tcp-settings.js';
import { responseTimeCheck } from './response-time.js';

export const tcpCheck = responseTimeCheck({
  checkType: 'TCP',
  path: 'tcp',
  summary: 'TCP monitor: a connection, optional data sent, the answer read',
  request: TcpRequestSchema,
  settings: TcpSettingsSchema,
});
