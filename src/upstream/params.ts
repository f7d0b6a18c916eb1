import { type CodecContext, type EndpointName, type ParamsOf, schemasOf } from './endpoints.ts';
import { InvalidParamsError } from './errors.ts';

/**
 * Checks parameters against the endpoint table, the one home of every input rule and limit, and
 * converts them to wire values; throws InvalidParamsError naming the first refused parameter.
 */
export function checkParams<N extends EndpointName>(
  name: N,
  ctx: CodecContext,
  params: ParamsOf<N>,
): Record<string, unknown> {
  const checked = schemasOf(name, ctx).params.safeParse(params);
  if (checked.success) return checked.data as Record<string, unknown>;
  const issue = checked.error.issues[0]!;
  throw new InvalidParamsError(
    issue.path.map((key) => (typeof key === 'number' ? key : String(key))),
    issue.message,
  );
}
