import type { IncomingMessage } from 'node:http';

/** A request's whole body as text, once it has arrived (what a webhook receiver verifies a signature over). */
export function readBody(request: IncomingMessage): Promise<string> {
  return new Promise<string>((resolve) => {
    let text = '';
    request.setEncoding('utf8');
    request.on('data', (chunk: string) => {
      text += chunk;
    });
    request.on('end', () => resolve(text));
  });
}
