/**
 * The HTTP client alerts go out through: it connects only to addresses the
 * webhook destination policy allows, judged on the address each connection
 * really opens to (names are resolved inside the connect, not beforehand).
 */
import { Agent, buildConnector } from 'undici';
import { assertLiteralAllowed, guardedLookup, type DestinationPolicy } from '../../net-policy/index.js';

const CONNECT_TIMEOUT_MS = 10_000;

export function webhookDispatcher(policy: DestinationPolicy): Agent {
  const connect = buildConnector({ lookup: guardedLookup(policy), timeout: CONNECT_TIMEOUT_MS });
  return new Agent({
    connect: (options, callback) => {
      try {
        // net.connect never looks up an IP literal, so the lookup cannot judge it.
        assertLiteralAllowed(policy, options.hostname);
      } catch (error) {
        callback(error as Error, null);
        return;
      }
      connect(options, callback);
    },
  });
}
