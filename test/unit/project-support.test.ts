import { describe, expect, it } from 'vitest';
import { ConstructRefusedError } from '../../src/service/projects/construct-refused-error.js';
import type { Resource } from '../../src/service/projects/payload.js';
import { refusalOf } from '../../src/service/projects/support.js';

const check = (logicalId: string, checkType: string): Resource => ({ logicalId, type: 'check', member: true, payload: { checkType, name: logicalId } });

describe('which constructs a project deploy refuses', () => {
  it('deploys every check type Outpost runs through the check routes, except Playwright suites', () => {
    for (const checkType of ['URL', 'TCP', 'DNS', 'ICMP', 'API', 'MULTI_STEP', 'BROWSER']) {
      expect(refusalOf(check(`c-${checkType}`, checkType)), checkType).toBeUndefined();
    }
    expect(refusalOf(check('suite', 'PLAYWRIGHT'))?.reason).toMatch(/POST \/v1\/checks\/playwright/);
  });

  it('names a heartbeat, an unknown check type and a kind Outpost has no counterpart for', () => {
    expect(refusalOf(check('pings', 'HEARTBEAT'))).toEqual({
      type: 'check',
      logicalId: 'pings',
      kind: 'HEARTBEAT',
      reason: 'Outpost has no heartbeat monitors: nothing here receives pings',
    });
    expect(refusalOf(check('grpc', 'GRPC'))?.reason).toBe('Outpost does not run GRPC checks');
    expect(refusalOf({ logicalId: 'board', type: 'dashboard', member: true, payload: {} })?.reason).toBe('Outpost has no dashboards');
    expect(refusalOf({ logicalId: 'pl', type: 'private-location', member: true, payload: {} })?.reason).toMatch(/PrivateLocation\.fromId/);
  });

  it('accepts alert channels of the kinds Outpost sends, links, groups and any reference', () => {
    expect(refusalOf({ logicalId: 'mail', type: 'alert-channel', member: true, payload: { type: 'EMAIL', config: {} } })).toBeUndefined();
    expect(refusalOf({ logicalId: 'pd', type: 'alert-channel', member: true, payload: { type: 'PAGERDUTY', config: {} } })?.kind).toBe('PAGERDUTY');
    for (const type of ['check-group', 'maintenance-window', 'alert-channel-subscription', 'private-location-check-assignment', 'private-location-group-assignment']) {
      expect(refusalOf({ logicalId: 'x', type, member: true, payload: {} }), type).toBeUndefined();
    }
    // A reference is looked up, never managed: even a kind deploy cannot create.
    expect(refusalOf({ logicalId: 'pl', type: 'private-location', member: false, physicalId: 'f0', payload: null })).toBeUndefined();
  });

  it('deploys StatusPage and StatusPageService, refusing a custom domain and v3 pages', () => {
    const page = (payload: Record<string, unknown>): Resource => ({ logicalId: 'page', type: 'status-page', member: true, payload: { name: 'P', url: 'p-page', cards: [], ...payload } });
    expect(refusalOf(page({}))).toBeUndefined();
    expect(refusalOf({ logicalId: 'svc', type: 'status-page-service', member: true, payload: { name: 'API' } })).toBeUndefined();
    expect(refusalOf(page({ customDomain: 'status.example.test' }))?.reason).toMatch(/no custom domains/);
    expect(refusalOf(page({ version: 3 }))?.reason).toBe('Outpost has no v3 status pages; use StatusPage, with cards of StatusPageServices');
    expect(refusalOf({ logicalId: 'c', type: 'status-page-component', member: true, payload: {} })?.reason).toBe('Outpost has no v3 status page components');
  });

  it('lists every refused construct in one message', () => {
    const error = new ConstructRefusedError([
      { type: 'check', logicalId: 'pings', kind: 'HEARTBEAT', reason: 'no heartbeats' },
      { type: 'dashboard', logicalId: 'board', reason: 'no dashboards' },
    ]);
    expect(error.code).toBe('PROJECT_CONSTRUCT_REFUSED');
    expect(error.message).toBe(
      'Outpost cannot deploy these constructs; nothing was changed:\n' +
        '  - check "pings" (HEARTBEAT): no heartbeats\n' +
        '  - dashboard "board": no dashboards',
    );
  });
});
