import { describe, expect, it } from 'vitest';
import { claimRoom } from '../../src/agent/claim-room.js';

describe('claim room', () => {
  it('without a backlog, asks for every free slot as soon as one frees', () => {
    expect(claimRoom(0, 1, 0)).toBe(1);
    expect(claimRoom(1, 1, 0)).toBe(0);
    expect(claimRoom(9, 10, 0)).toBe(1);
  });

  it('with a backlog, asks for running room plus backlog when idle', () => {
    expect(claimRoom(0, 100, 100)).toBe(200);
    expect(claimRoom(0, 100, 0)).toBe(100);
  });

  it('asks again only once half of the backlog has gone, then for all the room there is', () => {
    // 100 running and 100 waiting: full. 51 of the backlog gone: not yet; 50: yes.
    expect(claimRoom(200, 100, 100)).toBe(0);
    expect(claimRoom(151, 100, 100)).toBe(0);
    expect(claimRoom(150, 100, 100)).toBe(50);
    expect(claimRoom(120, 100, 100)).toBe(80);
  });

  it('never answers a negative room, even when more is claimed than it has room for', () => {
    expect(claimRoom(5, 1, 0)).toBe(0);
    expect(claimRoom(300, 100, 100)).toBe(0);
  });

  it('a lane the agent does not have has no room', () => {
    expect(claimRoom(0, 0, 0)).toBe(0);
  });
});
