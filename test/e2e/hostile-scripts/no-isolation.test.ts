/** With SANDBOX_ISOLATION=none and no SANDBOX_ALLOW_UNSAFE_NO_ISOLATION, the agent refuses every script, hostile or not. */
import { refusedSuite } from './suite.js';

refusedSuite({ title: 'no isolation, no opt-in', uidBase: 62300 });
