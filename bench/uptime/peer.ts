/**
 * The probing peer the uptime lane is measured against: Prometheus
 * blackbox_exporter (Debian's `prometheus-blackbox-exporter`), driven by a
 * load generator in this process that scrapes `/probe` the way Prometheus
 * would, a fixed number at a time.
 */
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent, request } from 'undici';
import { freePort, start, until, type Child } from './processes.js';

export const BLACKBOX_EXPORTER = process.env.BENCH_BLACKBOX_EXPORTER ?? '/usr/bin/prometheus-blackbox-exporter';

/** One HTTP module, IPv4 only (the target listens on 127.0.0.1), a timeout well above any delay the bench asks for. */
const CONFIG = `modules:
  http_2xx:
    prober: http
    timeout: 10s
    http:
      preferred_ip_protocol: ip4
      ip_protocol_fallback: false
`;

export interface Peer {
  child: Child;
  /** Probes `targets` (URLs), `concurrency` at a time; the probes it answered, each with its own response time in ms. */
  probe(targets: string[], concurrency: number): Promise<PeerRun>;
}

export interface PeerRun {
  /** Response time (connect + request + response, as blackbox_exporter splits it) by target, of the probes that succeeded. */
  responseMs: Map<string, number>;
  /** Probes that did not answer probe_success 1. */
  failed: number;
  /** Probes in flight, sampled every 50 ms while the run lasted. */
  inFlight: number[];
}

/** blackbox_exporter on a free loopback port, or undefined when it is not installed. */
export async function startPeer(children: Child[]): Promise<Peer | undefined> {
  if (!existsSync(BLACKBOX_EXPORTER)) return undefined;
  const dir = mkdtempSync(join(tmpdir(), 'outpost-bench-blackbox-'));
  const config = join(dir, 'blackbox.yml');
  writeFileSync(config, CONFIG);
  const port = await freePort();
  const child = start(BLACKBOX_EXPORTER, [`--config.file=${config}`, `--web.listen-address=127.0.0.1:${port}`, '--log.level=warn'], {});
  children.push(child);
  const base = `http://127.0.0.1:${port}`;
  await until(async () => (await fetch(`${base}/-/healthy`).catch(() => undefined))?.status === 200, 30_000, 'blackbox_exporter');
  // The scrapes keep their connections, as Prometheus does: the peer pays for probing, not for being scraped anew.
  const dispatcher = new Agent({ connections: 512, pipelining: 1 });
  return {
    child,
    async probe(targets, concurrency) {
      const responseMs = new Map<string, number>();
      let failed = 0;
      let next = 0;
      let inFlightNow = 0;
      const inFlight: number[] = [];
      const sampler = setInterval(() => inFlight.push(inFlightNow), 50);
      const worker = async () => {
        while (next < targets.length) {
          const target = targets[next]!;
          next += 1;
          inFlightNow += 1;
          try {
            const answer = await request(`${base}/probe?module=http_2xx&target=${encodeURIComponent(target)}`, { dispatcher });
            const text = await answer.body.text();
            if (!/^probe_success 1$/m.test(text)) failed += 1;
            else responseMs.set(target, phasesMs(text));
          } finally {
            inFlightNow -= 1;
          }
        }
      };
      try {
        await Promise.all(Array.from({ length: concurrency }, worker));
      } finally {
        clearInterval(sampler);
      }
      return { responseMs, failed, inFlight };
    },
  };
}

/** The phases of one HTTP probe (resolve, connect, tls, processing, transfer) added up, in ms. */
function phasesMs(text: string): number {
  let seconds = 0;
  for (const match of text.matchAll(/^probe_http_duration_seconds\{phase="[a-z]+"\} ([0-9.e+-]+)$/gm)) seconds += Number(match[1]);
  return seconds * 1000;
}
