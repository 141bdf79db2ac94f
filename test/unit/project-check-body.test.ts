import { describe, expect, it } from 'vitest';
import { checkTypeDefinition } from '../../src/service/check-types/index.js';
import { checkBody } from '../../src/service/projects/check-body.js';
import { groupBody } from '../../src/service/projects/group-body.js';
import { collectLinks } from '../../src/service/projects/links.js';

const links = { groupId: null, privateLocations: ['home'], alertChannelSubscriptions: [{ alertChannelId: 4, activated: true }] };

describe('a check construct as the body of the check routes', () => {
  it('names an API check\'s scripts as the API does and drops what only the hosted product reads', () => {
    const mapped = checkBody(
      checkTypeDefinition('API')!,
      {
        checkType: 'API',
        name: 'api',
        frequencyOffset: 3,
        request: { url: 'http://127.0.0.1/' },
        localSetupScript: 'console.log(1)',
        setupScriptPath: 'setup.ts',
        setupScriptDependencies: [],
      },
      links,
      [],
    );
    expect(mapped).toEqual({
      body: {
        checkType: 'API',
        name: 'api',
        request: { url: 'http://127.0.0.1/' },
        setupScript: 'console.log(1)',
        tearDownScript: null,
        groupId: null,
        privateLocations: ['home'],
        alertChannelSubscriptions: [{ alertChannelId: 4, activated: true }],
      },
    });
  });

  it('refuses setup scripts that import files, which API check scripts cannot', () => {
    const mapped = checkBody(checkTypeDefinition('API')!, { checkType: 'API', localSetupScript: 'x', setupScriptDependencies: [0] }, links, []);
    expect(mapped).toEqual({ problem: "its setup script imports other files, which Outpost's API check scripts cannot" });
  });

  it('inlines a script check\'s shared files as its dependencies', () => {
    const shared = [
      { path: 'lib/a.ts', content: 'export const a = 1' },
      { path: 'lib/b.ts', content: 'export const b = 2' },
    ];
    const mapped = checkBody(checkTypeDefinition('MULTI_STEP')!, { checkType: 'MULTI_STEP', script: 's', scriptPath: 'x.spec.ts', dependencies: [1] }, links, shared);
    expect(mapped).toMatchObject({ body: { script: 's', scriptPath: 'x.spec.ts', dependencies: [shared[1]] } });
    expect(checkBody(checkTypeDefinition('BROWSER')!, { checkType: 'BROWSER', dependencies: [7] }, links, shared)).toEqual({
      problem: 'its dependency 7 names no shared file of the project',
    });
  });

  it('refuses a group for a check type the API keeps out of groups', () => {
    expect(checkBody(checkTypeDefinition('URL')!, { checkType: 'URL' }, { ...links, groupId: 3 }, [])).toEqual({
      problem: 'Outpost does not run URL checks in check groups',
    });
  });
});

describe('links gathered per check or group', () => {
  it('collects subscriptions and private location assignments by their owner', () => {
    const found = collectLinks([
      { logicalId: 's1', type: 'alert-channel-subscription', member: true, payload: { alertChannelId: { ref: 'mail' }, checkId: { ref: 'c' }, activated: true } },
      { logicalId: 's2', type: 'alert-channel-subscription', member: true, payload: { alertChannelId: { ref: 'mail' }, groupId: { ref: 'g' }, activated: false } },
      { logicalId: 'a1', type: 'private-location-check-assignment', member: true, payload: { privateLocationId: { ref: 'pl' }, checkId: { ref: 'c' } } },
      { logicalId: 'a2', type: 'private-location-group-assignment', member: true, payload: { privateLocationId: { ref: 'pl' }, groupId: { ref: 'g' } } },
    ]);
    expect(found.subscriptions('check', 'c')).toEqual([{ channel: 'mail', activated: true }]);
    expect(found.subscriptions('check-group', 'g')).toEqual([{ channel: 'mail', activated: false }]);
    expect(found.privateLocations('check', 'c')).toEqual(['pl']);
    expect(found.privateLocations('check-group', 'g')).toEqual(['pl']);
    // A check and a group may share a logical id; their links stay apart.
    expect(found.privateLocations('check', 'g')).toEqual([]);
  });
});

describe('a check group construct as the body of the group routes', () => {
  it('switches on a group that does not say, as the CLI expects, and drops its version', () => {
    const none = { privateLocations: [], alertChannelSubscriptions: [] };
    expect(groupBody({ name: 'Backend', v: 2 }, none)).toEqual({ name: 'Backend', activated: true, privateLocations: [], alertChannelSubscriptions: [] });
    expect(groupBody({ name: 'Paused', activated: false }, none)).toMatchObject({ activated: false });
  });
});
