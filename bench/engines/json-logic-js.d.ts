/** The part of json-logic-js (which ships no types) that the benchmark uses. */
declare module 'json-logic-js' {
  type Operation = (...args: never[]) => unknown;
  const jsonLogic: {
    apply(logic: unknown, data?: unknown): unknown;
    add_operation(name: string, operation: Operation): void;
    truthy(value: unknown): boolean;
  };
  export default jsonLogic;
}
