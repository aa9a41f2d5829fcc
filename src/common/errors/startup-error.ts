/**
 * A start that cannot work for a reason the operator can fix. Its message is one plain line that
 * names the cause and the fix; main.ts prints it as is (no stack) and exits non-zero.
 */
export class StartupError extends Error {
  constructor(message: string) {
    super(message.replace(/\s*\n\s*/g, ' ').trim());
    this.name = 'StartupError';
  }
}

/** The errno code of a Node.js system error, or `undefined`. */
export function errnoCode(error: unknown): string | undefined {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  return typeof code === 'string' ? code : undefined;
}
