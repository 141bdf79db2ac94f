import { UrlRequestSchema, UrlSettingsSchema } from '../../protocol/url-settings.js';
import { responseTimeCheck } from './response-time.js';

export const urlCheck = responseTimeCheck({
  checkType: 'URL',
  path: 'url',
  summary: 'URL monitor: one HTTP(S) request, its status code and timings',
  request: UrlRequestSchema,
  settings: UrlSettingsSchema,
});
