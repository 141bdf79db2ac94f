import { EventEmitter } from 'node:events';
import type { SessionRow } from './store/sessions.js';

interface ServiceEventMap {
  /** New or re-offered jobs wait at this private location: long polls there wake up. */
  jobsQueued: [privateLocationId: string];
  sessionCompleted: [session: SessionRow];
}

export class ServiceEvents extends EventEmitter<ServiceEventMap> {
  constructor() {
    super();
    // Every waiting long poll listens; hundreds of agents are normal.
    this.setMaxListeners(0);
  }
}
