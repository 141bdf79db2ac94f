/** Hostile scripts against an agent that is not root (uid 10001), isolating jobs with namespaces, with its embedded Redis. */
import { hostileSuite } from './suite.js';

hostileSuite({ title: 'non-root agent, namespaces', isolation: 'namespaces', user: 'non-root', uidBase: 62200 });
