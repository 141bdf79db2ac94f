import { inspect } from 'node:util';

/** A value that never prints itself: logs, JSON and inspection all see `<redacted>`. */
export class Secret {
  readonly #value: string;

  constructor(value: string) {
    this.#value = value;
  }

  reveal(): string {
    return this.#value;
  }

  toString(): string {
    return '<redacted>';
  }

  toJSON(): string {
    return '<redacted>';
  }

  [inspect.custom](): string {
    return '<redacted>';
  }
}
