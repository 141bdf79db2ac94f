import { EventEmitter } from 'node:events';
import type { SessionRow } from './store/sessions.js';

interface ServiceEventMap {
  /** New or re-offered jobs wait at this private location (queued here or by another instance): long polls there wake up. */
  jobsQueued: [privateLocationId: string];
  /** This instance completed the session: its follow-ups (alerts, group runs) are this instance's to do. */
  sessionCompleted: [session: SessionRow];
  /** The session completed, on this instance or another: for whoever waits for it. */
  sessionFinished: [sessionId: string];
}

export class ServiceEvents extends EventEmitter<ServiceEventMap> {
  constructor() {
    super();
    // Every waiting long poll listens; hundreds of agents are normal.
    this.setMaxListeners(0);
    this.on('sessionCompleted', (session) => this.emit('sessionFinished', session.id));
  }
}
