/** Goes on with a request: the next layer, or at the end the step itself. */
export type Next<Request, Result> = (request: Request) => Promise<Result>;

/**
 * Calls one layer with its `next`: where each kind of hook checks what the layer returns and reads
 * what it throws.
 */
export type Invoke<Layer, Request, Result> = (
  layer: Layer,
  request: Request,
  next: Next<Request, Result>,
) => Promise<Result>;

/**
 * Checks what `layer` passed to its `next`: a promise to answer with instead (the layer's failure),
 * or `undefined` to go on.
 */
export type Refuse<Layer, Request, Result> = (layer: Layer, sent: Request) => Promise<Result> | undefined;

/**
 * Koa's compose: `layers[0]` wraps `layers[1]` … wraps `step`. The chain is built once (per run);
 * each call of it makes one `next` function per layer it passes through, so a middleware may keep
 * it, call it again (a retry) or not at all. With no layer, the chain is `step` itself. `refuse`,
 * when given, checks inside that same `next` what each layer sends on.
 */
export function compose<Layer, Request, Result>(
  layers: readonly Layer[],
  invoke: Invoke<Layer, Request, Result>,
  refuse?: Refuse<Layer, Request, Result>,
): (request: Request, step: Next<Request, Result>) => Promise<Result> {
  const dispatch = (index: number, request: Request, step: Next<Request, Result>): Promise<Result> => {
    if (index === layers.length) return step(request);
    const layer = layers[index] as Layer;
    if (refuse === undefined) return invoke(layer, request, (sent) => dispatch(index + 1, sent, step));
    return invoke(layer, request, (sent) => refuse(layer, sent) ?? dispatch(index + 1, sent, step));
  };
  return (request, step) => dispatch(0, request, step);
}

/**
 * {@link compose} for layers whose answers are checked (the user's middleware): `hook` runs a
 * layer and returns what it answered, whatever that is. An answer that is the very promise the
 * layer's `next` returned — a pass-through — is taken as it is (checked further in); a throw or any
 * other answer goes to `check`, with what `before` read from the request before the layer ran (a
 * layer may change the request it was given). Each layer passed makes one `next`, which also
 * remembers what it returned.
 */
export function composeChecked<Layer, Request, Result, Context>(
  layers: readonly Layer[],
  hook: (layer: Layer, request: Request, next: Next<Request, Result>) => unknown,
  check: (layer: Layer, answer: unknown, context: Context) => Promise<Result>,
  before?: (request: Request) => Context,
  refuse?: Refuse<Layer, Request, Result>,
): (request: Request, step: Next<Request, Result>) => Promise<Result> {
  const dispatch = (index: number, request: Request, step: Next<Request, Result>): Promise<Result> => {
    if (index === layers.length) return step(request);
    const layer = layers[index] as Layer;
    const context = before === undefined ? (undefined as Context) : before(request);
    let forwarded: Promise<Result> | undefined;
    const next = (sent: Request): Promise<Result> =>
      (forwarded = (refuse === undefined ? undefined : refuse(layer, sent)) ?? dispatch(index + 1, sent, step));
    let answer: unknown;
    try {
      answer = hook(layer, request, next);
    } catch (error) {
      answer = Promise.reject(error);
    }
    return answer === forwarded && forwarded !== undefined ? forwarded : check(layer, answer, context);
  };
  return (request, step) => dispatch(0, request, step);
}
