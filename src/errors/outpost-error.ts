/**
 * Base of every error Outpost raises on purpose. `code` is stable and is what
 * callers compare: errors cross process and network boundaries, classes do not.
 */
export abstract class OutpostError extends Error {
  abstract readonly code: string;

  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = new.target.name;
  }

  toJSON(): { code: string; message: string } {
    return { code: this.code, message: this.message };
  }
}

export function errorCode(error: unknown): string | undefined {
  return error instanceof OutpostError ? error.code : undefined;
}
