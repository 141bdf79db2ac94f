/**
 * Which probe runs which check type. A lookup table, so adding a type is one
 * line here and the dispatch code never changes. Each probe's settings parser
 * is memoized here (settings-memo.ts): the runs of a check repeat its settings.
 */
import { UnsupportedCheckTypeError } from '../../errors/index.js';
import type { CheckType } from '../../protocol/enums.js';
import { apiProbe } from './api.js';
import { createDnsProbe } from './dns.js';
import { icmpProbe } from './icmp.js';
import type { Probe } from './probe.js';
import { memoizeSettings } from './settings-memo.js';
import { createTcpProbe } from './tcp.js';
import { urlProbe } from './url.js';

export interface ProbeOptions {
  /**
   * USE_OS_DNS_RESOLVER: TCP monitors, and DNS monitors whose name server is
   * given as a host name, resolve through getaddrinfo instead of DNS.
   */
  useOsDnsResolver: boolean;
}

export class ProbeRegistry {
  readonly #probes: ReadonlyMap<string, Probe<unknown>>;

  constructor(options: ProbeOptions) {
    const probes: Probe<unknown>[] = [
      urlProbe,
      createTcpProbe({ useOsResolver: options.useOsDnsResolver }),
      createDnsProbe({ useOsResolver: options.useOsDnsResolver }),
      icmpProbe,
      apiProbe,
    ] as Probe<unknown>[];
    this.#probes = new Map(
      probes.map((probe) => [probe.checkType, { ...probe, parseSettings: memoizeSettings((raw) => probe.parseSettings(raw)) }]),
    );
  }

  /** The check types this agent can run, for the hello handshake. */
  checkTypes(): CheckType[] {
    return [...this.#probes.values()].map((probe) => probe.checkType);
  }

  /** Takes a plain string: a job may name a type this agent version has never heard of. */
  probeFor(checkType: string): Probe<unknown> {
    const probe = this.#probes.get(checkType);
    if (probe === undefined) {
      throw new UnsupportedCheckTypeError(
        `No probe for check type ${checkType}; this agent runs ${this.checkTypes().join(', ')}`,
      );
    }
    return probe;
  }
}
