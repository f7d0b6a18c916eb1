import { BREAK, type DocumentNode, visit } from 'graphql';

const found = new WeakMap<DocumentNode, boolean>();

/**
 * Whether a document uses `@defer` or `@stream` anywhere (fragments included), memoized per
 * document: such answers arrive in parts, which graphql-jit cannot produce and the response cache
 * does not keep.
 */
export function defersOrStreams(document: DocumentNode): boolean {
  let result = found.get(document);
  if (result === undefined) {
    result = false;
    visit(document, {
      Directive(node) {
        if (node.name.value === 'defer' || node.name.value === 'stream') {
          result = true;
          return BREAK;
        }
        return undefined;
      },
    });
    found.set(document, result);
  }
  return result;
}
