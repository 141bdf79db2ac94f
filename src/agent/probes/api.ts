/**
 * The API check without scripts (the uptime lane): one request built from the
 * settings and the job's variables, sent and timed like the URL monitor's,
 * judged by its assertions. The whole outcome is scrubbed of the job's secret
 * variables before it leaves the probe: placeholders put them into the
 * request, and the target may echo them. With setup or teardown scripts the
 * job runs in the script lane instead (api-check/api-script-runner.ts).
 */
import { ApiSettingsSchema, type ApiSettings } from '../../protocol/api-settings.js';
import { Scrubber } from '../../scrub/index.js';
import { errorCode } from '../../errors/index.js';
import { exchangeApiRequest, judgeApiResponse } from '../api-check/api-run.js';
import { prepareRequest, requestUrl, resolveAssertions } from '../api-check/request.js';
import { erroredOutcome, type Probe, type ProbeContext, type ProbeOutcome } from './probe.js';
import { settingsParser } from './settings-parser.js';

const parseSchema = settingsParser(ApiSettingsSchema, 'API check');

export const apiProbe: Probe<ApiSettings> = {
  checkType: 'API',
  parseSettings: (raw) => parseSchema(raw),
  run: runApiProbe,
};

async function runApiProbe(settings: ApiSettings, context: ProbeContext): Promise<ProbeOutcome> {
  const variables = context.environmentVariables ?? [];
  let scrubber: Scrubber;
  try {
    // Built first: a secret too large to scrub stops the run before it is sent anywhere.
    scrubber = new Scrubber(variables.filter((variable) => variable.secret).map((variable) => variable.value));
  } catch (error) {
    return erroredOutcome({ code: errorCode(error) ?? 'INTERNAL', message: (error as Error).message }, 0, null, {});
  }
  let outcome: ProbeOutcome;
  const request = prepareRequest(settings.request, variables);
  try {
    requestUrl(request);
    const exchange = await exchangeApiRequest(request, settings.request, context.signal, context.timeoutMs, context.destinations);
    const assertions = resolveAssertions(settings.request.assertions, variables);
    outcome = judgeApiResponse({ ...settings, request: { assertions } }, request, exchange);
  } catch (error) {
    outcome = erroredOutcome({ code: errorCode(error) ?? 'INTERNAL', message: (error as Error).message }, 0, null, {});
  }
  return scrubber.scrubValue(outcome) as ProbeOutcome;
}
