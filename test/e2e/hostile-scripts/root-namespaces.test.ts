/**
 * Hostile scripts against a root agent isolating jobs with namespaces (each
 * job also a fresh user id), using a Redis of the test's own on loopback TCP,
 * which scripts can reach: the queue must not trust what they put there.
 */
import { hostileSuite } from './suite.js';

hostileSuite({ title: 'root agent, namespaces, Redis on TCP', isolation: 'namespaces', user: 'root', uidBase: 62000, externalRedis: true });
