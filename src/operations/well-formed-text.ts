/// <reference lib="es2024.string" />
import { type ExecutionArgs, GraphQLError, getOperationAST } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { ErrorCode } from '../error-codes.ts';
import { LONE_SURROGATE } from '../ids/local-id.ts';
import { refuseBeforeRun } from './refuse-before-run.ts';

/**
 * Text a client sends is well-formed UTF-16, or nothing runs. JSON lets a string hold a lone
 * surrogate (`"\ud83d"`), which has no UTF-8 form: the service received U+FFFD in its place and
 * stored the write, and the id built from the text threw, so the client was told its write failed
 * although it took effect. Such a variable is refused with BAD_USER_INPUT, naming its path and the
 * surrogate's position, before any upstream call: in `onExecute` and `onSubscribe`, which every
 * door (HTTP, SSE, graphql-ws) passes. The document's own literals need no check here: graphql-js
 * refuses a lone surrogate anywhere in a document as a syntax error (GRAPHQL_PARSE_FAILED).
 */
export function useWellFormedText(): Plugin {
  return refuseBeforeRun((args) => {
    const found = args.variableValues ? firstIllFormed(args.variableValues) : undefined;
    return found && illFormedError(found, args);
  });
}

/** A variable's ill-formed text: where it is (`$v.names.2`, as input errors name a place) and what. */
interface IllFormed {
  /** The variable it is in, or undefined for a variable's name. */
  variable: string | undefined;
  /** `$v.names.2`; for a key, the object holding it. */
  path: string;
  text: string;
  /** The text is a key (a member's or a variable's name), not a value. */
  key: boolean;
}

/** The first ill-formed string (value or key) of the variables, in the order they were sent. */
function firstIllFormed(variables: Readonly<Record<string, unknown>>): IllFormed | undefined {
  // An explicit stack, never the call stack: the walk is as deep as MAX_INPUT_DEPTH lets a request be.
  const stack: { variable: string | undefined; path: string; value: unknown }[] = [
    { variable: undefined, path: '', value: variables },
  ];
  for (let next = stack.pop(); next; next = stack.pop()) {
    const { variable, path, value } = next;
    if (typeof value === 'string') {
      if (!value.isWellFormed()) return { variable, path, text: value, key: false };
    } else if (Array.isArray(value)) {
      for (let i = value.length - 1; i >= 0; i--) stack.push({ variable, path: `${path}.${i}`, value: value[i] });
    } else if (value !== null && typeof value === 'object') {
      const entries = Object.entries(value);
      for (const [key] of entries) if (!key.isWellFormed()) return { variable, path, text: key, key: true };
      for (let i = entries.length - 1; i >= 0; i--) {
        const [key, member] = entries[i]!;
        stack.push(
          variable === undefined
            ? { variable: key, path: `$${key}`, value: member }
            : { variable, path: `${path}.${key}`, value: member },
        );
      }
    }
  }
  return undefined;
}

function illFormedError(found: IllFormed, args: ExecutionArgs): GraphQLError {
  const position = found.text.search(LONE_SURROGATE);
  const unit = found.text.charCodeAt(position).toString(16).toUpperCase();
  const what =
    found.variable === undefined
      ? "A variable's name"
      : found.key
        ? `A key of variable "${found.path}"`
        : `Variable "${found.path}"`;
  // Located at the variable's definition, as graphql-js locates its own variable errors.
  const definition = getOperationAST(args.document, args.operationName)?.variableDefinitions?.find(
    (candidate) => candidate.variable.name.value === found.variable,
  );
  return new GraphQLError(
    `${what} is not well-formed text: a lone UTF-16 surrogate (U+${unit}) at position ${position}. Send each surrogate with its other half (JSON's "\\ud83d\\ude00" is one character, "\\ud83d" alone is none). Nothing was sent to the reservation service.`,
    {
      ...(definition ? { nodes: definition } : {}),
      extensions: { code: ErrorCode.BAD_USER_INPUT, ...(found.variable === undefined ? {} : { field: found.path }) },
    },
  );
}
