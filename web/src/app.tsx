import { createContext } from 'preact';
import { useContext, useEffect, useState } from 'preact/hooks';
import { clearCredentials, loadCredentials, onUnauthorized, saveCredentials, verifyCredentials, type Credentials } from './api';
import { CheckPage } from './pages/check';
import { ChecksPage } from './pages/checks';
import { LocationsPage } from './pages/locations';
import { ResultPage } from './pages/result';
import { href, useRoute } from './router';
import { PageTitle } from './ui';

const CredentialsContext = createContext<Credentials | undefined>(undefined);

export function useCredentials(): Credentials {
  const credentials = useContext(CredentialsContext);
  if (!credentials) throw new Error('not logged in');
  return credentials;
}

export function App() {
  const [credentials, setCredentials] = useState<Credentials | undefined>(() => loadCredentials());
  const [notice, setNotice] = useState<string | undefined>(undefined);
  useEffect(
    () =>
      onUnauthorized(() => {
        clearCredentials();
        setCredentials(undefined);
        setNotice('The service no longer accepts this API key for this account. Log in again.');
      }),
    [],
  );
  if (!credentials) {
    return (
      <Login
        notice={notice}
        onLogin={(next) => {
          saveCredentials(next);
          setNotice(undefined);
          setCredentials(next);
        }}
      />
    );
  }
  return (
    <CredentialsContext.Provider value={credentials}>
      <Shell
        credentials={credentials}
        onLogout={() => {
          clearCredentials();
          setCredentials(undefined);
          setNotice('Logged out: the key is gone from this tab.');
        }}
      />
    </CredentialsContext.Provider>
  );
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function Login({ onLogin, notice }: { onLogin: (credentials: Credentials) => void; notice: string | undefined }) {
  const [accountId, setAccountId] = useState('');
  const [apiKey, setApiKey] = useState('');
  const [error, setError] = useState<string | undefined>(undefined);
  const [busy, setBusy] = useState(false);

  const submit = async (event: Event) => {
    event.preventDefault();
    const candidate = { accountId: accountId.trim(), apiKey: apiKey.trim() };
    if (!UUID.test(candidate.accountId)) return setError('The account id is a UUID, as `npm start` or your administrator gave it.');
    if (!candidate.apiKey) return setError('Enter the API key.');
    setBusy(true);
    setError(undefined);
    try {
      await verifyCredentials(candidate);
      onLogin(candidate);
    } catch (failure) {
      setError(failure instanceof Error ? failure.message : String(failure));
    } finally {
      setBusy(false);
    }
  };

  return (
    <main id="main" class="login">
      <PageTitle title="Log in">
        <span class="logo" aria-hidden="true" />
        Outpost
      </PageTitle>
      <p class="lead">Results of your checks and the agents that run them.</p>
      {notice ? (
        <p class="notice" role="status">
          {notice}
        </p>
      ) : null}
      <form onSubmit={(event) => void submit(event)} noValidate aria-describedby="login-help">
        <div class="form-row">
          <label for="account-id">Account id</label>
          <input
            id="account-id"
            name="account-id"
            value={accountId}
            onInput={(event) => setAccountId(event.currentTarget.value)}
            autocomplete="off"
            spellcheck={false}
            required
            aria-invalid={error !== undefined && !UUID.test(accountId.trim())}
          />
        </div>
        <div class="form-row">
          <label for="api-key">API key</label>
          <input
            id="api-key"
            name="api-key"
            type="password"
            value={apiKey}
            onInput={(event) => setApiKey(event.currentTarget.value)}
            autocomplete="off"
            spellcheck={false}
            required
          />
        </div>
        {error ? (
          <p class="error-note" role="alert" id="login-error">
            {error}
          </p>
        ) : null}
        <button type="submit" disabled={busy}>
          {busy ? 'Checking…' : 'Log in'}
        </button>
      </form>
      <p id="login-help" class="muted small">
        The key and account id are those of the API (<code>Authorization: Bearer</code> and <code>x-service-account</code>).
        They stay in this tab's session storage only and are forgotten when the tab closes.
      </p>
    </main>
  );
}

function Shell({ credentials, onLogout }: { credentials: Credentials; onLogout: () => void }) {
  const route = useRoute();
  const [first, second, third, fourth] = route.parts;
  let page;
  let section: 'checks' | 'locations' = 'checks';
  if (first === 'checks' && second && third === 'results' && fourth) page = <ResultPage checkId={second} resultId={fourth} />;
  else if (first === 'checks' && second) page = <CheckPage key={second} checkId={second} />;
  else if (first === 'locations') {
    section = 'locations';
    page = <LocationsPage />;
  } else page = <ChecksPage route={route} />;

  return (
    <>
      <a class="skip-link" href="#main" onClick={(event) => {
        event.preventDefault();
        document.getElementById('main')?.focus();
      }}>
        Skip to content
      </a>
      <header class="top">
        <a class="brand" href={href([])}>
          <span class="logo" aria-hidden="true" />
          Outpost
        </a>
        <nav aria-label="Main">
          <ul>
            <li>
              <a href={href([])} aria-current={section === 'checks' ? 'page' : undefined}>
                Checks
              </a>
            </li>
            <li>
              <a href={href(['locations'])} aria-current={section === 'locations' ? 'page' : undefined}>
                Private locations
              </a>
            </li>
          </ul>
        </nav>
        <div class="account">
          <span class="muted small" title={`Account ${credentials.accountId}`}>
            Account {credentials.accountId.slice(0, 8)}…
          </span>
          <button type="button" class="secondary" onClick={onLogout}>
            Log out
          </button>
        </div>
      </header>
      <main id="main" tabIndex={-1}>
        {page}
      </main>
    </>
  );
}
