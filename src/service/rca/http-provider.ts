import type { Secret } from '../../config/secret.js';
import { compileBodyValidator } from '../validation.js';
import { AnalysisSchema, type Analysis, type AnalysisInput, type AnalysisProvider } from './provider.js';

const validAnalysis = compileBodyValidator(AnalysisSchema);
/** An external model may think for a while; past this the attempt counts as failed. */
const TIMEOUT_MS = 120_000;

/**
 * An external model behind an HTTP endpoint: POST `{model, input}` as JSON
 * (with `Authorization: Bearer <token>` when one is set), answered by an
 * Analysis as JSON. Anything else is a failed attempt.
 */
export class HttpAnalysisProvider implements AnalysisProvider {
  readonly provider: string;

  constructor(
    private readonly url: string,
    readonly model: string,
    private readonly token: Secret | undefined,
  ) {
    this.provider = `http:${new URL(url).host}`;
  }

  async analyse(input: AnalysisInput, signal: AbortSignal): Promise<Analysis> {
    const response = await fetch(this.url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        ...(this.token ? { authorization: `Bearer ${this.token.reveal()}` } : {}),
      },
      body: JSON.stringify({ model: this.model, input }),
      signal: AbortSignal.any([signal, AbortSignal.timeout(TIMEOUT_MS)]),
    });
    if (!response.ok) throw new Error(`the analysis endpoint answered ${response.status}`);
    const body: unknown = await response.json().catch(() => undefined);
    if (!validAnalysis(body)) {
      const first = validAnalysis.errors?.[0];
      throw new Error(`the analysis endpoint answered no analysis (${first ? `${first.instancePath || '/'} ${first.message}` : 'not JSON'})`);
    }
    return body as Analysis;
  }
}
