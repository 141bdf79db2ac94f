/** Hostile scripts against a root agent isolating jobs by a fresh user id each, with its embedded Redis. */
import { hostileSuite } from './suite.js';

hostileSuite({ title: 'root agent, users', isolation: 'users', user: 'root', uidBase: 62100 });
