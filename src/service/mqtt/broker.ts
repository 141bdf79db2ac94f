/**
 * The MQTT broker the public `checkly` CLI follows test runs on. A client
 * connects with its account id as username and an API key of that account as
 * password; it may subscribe only to its own account's topics and publish
 * nothing: only the service publishes.
 */
import { Aedes, type AuthenticateError, type Client } from 'aedes';
import type { Database } from '../db/database.js';
import { holderOfApiKey } from '../store/accounts.js';
import { isAccountTopic } from '../test-sessions/topics.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
// aedes' AuthErrorCode is a const enum, which isolated modules cannot import.
const SERVER_UNAVAILABLE: AuthenticateError['returnCode'] = 3;
const BAD_USERNAME_OR_PASSWORD: AuthenticateError['returnCode'] = 4;

function authError(message: string, returnCode = BAD_USERNAME_OR_PASSWORD, cause?: unknown): AuthenticateError {
  const error = new Error(message, { cause }) as AuthenticateError;
  error.returnCode = returnCode;
  return error;
}

export interface AccountBroker {
  broker: Aedes;
  /** The account a connected client authenticated as. */
  accountOf: (client: Client) => string | undefined;
  publish: (topic: string, message: unknown) => Promise<void>;
  close: () => Promise<void>;
}

export async function createAccountBroker(db: Database): Promise<AccountBroker> {
  const accounts = new WeakMap<Client, string>();
  const broker = await Aedes.createBroker({
    authenticate: (client, username, password, done) => {
      const accountId = username ?? '';
      const key = password?.toString('utf8') ?? '';
      if (!UUID.test(accountId) || key === '') {
        done(authError('username must be the account id and password an API key of it'), false);
        return;
      }
      holderOfApiKey(db, key).then(
        (holder) => {
          if (!holder || holder.accountId !== accountId.toLowerCase()) {
            done(authError('unknown API key, or not a key of this account'), false);
            return;
          }
          accounts.set(client, holder.accountId);
          done(null, true);
        },
        (error: unknown) => done(authError('the service cannot check API keys now', SERVER_UNAVAILABLE, error), false),
      );
    },
    authorizeSubscribe: (client, subscription, done) => {
      const accountId = accounts.get(client);
      // A null subscription refuses this one (SUBACK 128) and keeps the connection; an error would drop it.
      if (!accountId || !isAccountTopic(subscription.topic, accountId)) {
        done(null, null);
        return;
      }
      done(null, subscription);
    },
    authorizePublish: (_client, _packet, done) => done(new Error('clients may not publish')),
  });
  return {
    broker,
    accountOf: (client) => accounts.get(client),
    publish: (topic, message) =>
      new Promise((resolve, reject) =>
        broker.publish(
          { cmd: 'publish', topic, payload: Buffer.from(JSON.stringify(message)), qos: 0, retain: false, dup: false },
          (error) => (error ? reject(error) : resolve()),
        ),
      ),
    close: () => new Promise((resolve) => broker.close(() => resolve())),
  };
}
