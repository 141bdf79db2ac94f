// undici publishes types for its index only; these files hold the objects its
// index re-exports, typed here as the index types them.
declare module 'undici/lib/dispatcher/dispatcher.js' {
  import { Dispatcher } from 'undici';
  export default Dispatcher;
}

declare module 'undici/lib/api/index.js' {
  import type { Dispatcher } from 'undici';
  /** The methods undici's index puts on every dispatcher. */
  const api: Pick<Dispatcher, 'request' | 'stream' | 'pipeline' | 'upgrade' | 'connect'>;
  export default api;
}

declare module 'undici/lib/dispatcher/env-http-proxy-agent.js' {
  import { EnvHttpProxyAgent } from 'undici';
  export default EnvHttpProxyAgent;
}
