/**
 * Sockets that only open to addresses a policy allows. The check is on the
 * addresses the name resolved to for this very connection, not on an earlier
 * lookup, so a name that answers differently the second time (DNS rebinding)
 * cannot slip a denied address through.
 */
import dns from 'node:dns';
import net, { type LookupFunction } from 'node:net';
import { DestinationDeniedError } from '../errors/index.js';
import { describeDenial, type DestinationPolicy } from './destination-policy.js';

/** For net.connect / tls.connect `lookup`: the name's addresses the policy allows, or DestinationDeniedError when it allows none. */
export function guardedLookup(policy: DestinationPolicy): LookupFunction {
  return (hostname, options, callback) => {
    dns.lookup(hostname, { ...options, all: true }, (error, addresses) => {
      if (error) {
        callback(error, '', 0);
        return;
      }
      const permitted = addresses.filter((entry) => policy.decide(entry.address).allowed);
      const first = permitted[0];
      if (first === undefined) {
        const verdicts = addresses.map((entry) => policy.decide(entry.address)).filter((verdict) => !verdict.allowed);
        const reasons = verdicts.map(describeDenial).join(', ');
        callback(new DestinationDeniedError(`${hostname} resolves only to denied addresses: ${reasons || 'none at all'}`), '', 0);
        return;
      }
      if (options.all) callback(null, permitted);
      else callback(null, first.address, first.family);
    });
  };
}

/** Throws DestinationDeniedError when `host` is an IP literal the policy denies; a name is left to guardedLookup. */
export function assertLiteralAllowed(policy: DestinationPolicy, host: string): void {
  const bare = /^\[(.*)\]$/.exec(host)?.[1] ?? host;
  // Exactly what net.connect skips its lookup for; everything else goes through guardedLookup.
  if (net.isIP(bare) === 0) return;
  const verdict = policy.decide(bare);
  if (!verdict.allowed) throw new DestinationDeniedError(`${describeDenial(verdict)}, which is denied`);
}
