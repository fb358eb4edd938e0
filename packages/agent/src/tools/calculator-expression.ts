import { all, create, type FactoryFunctionMap, type MathNode } from 'mathjs';

/** A refused or failed calculation; `code` is stable so callers and tests can tell the cases apart. */
export class CalculatorError extends Error {
  constructor(
    readonly code: 'CALC_REFUSED' | 'CALC_INVALID' | 'CALC_TIMEOUT' | 'CALC_MEMORY' | 'CALC_FAILED',
    message: string,
  ) {
    super(message);
    this.name = 'CalculatorError';
  }
}

// Arithmetic only: everything a calculator needs, nothing that defines functions,
// changes units or imports, builds matrices or re-enters the parser.
export const allowedFunctions = new Set([
  'abs', 'sqrt', 'cbrt', 'nthRoot', 'exp', 'expm1', 'log', 'log10', 'log2', 'log1p', 'pow', 'square', 'cube',
  'sin', 'cos', 'tan', 'asin', 'acos', 'atan', 'atan2', 'sinh', 'cosh', 'tanh', 'asinh', 'acosh', 'atanh',
  'sec', 'csc', 'cot', 'round', 'floor', 'ceil', 'fix', 'sign', 'mod', 'gcd', 'lcm', 'min', 'max',
  'factorial', 'gamma', 'hypot', 'combinations', 'permutations', 'unaryMinus', 'unaryPlus', 'add', 'subtract',
  'multiply', 'divide', 'number', 'to', 're', 'im', 'conj', 'arg',
]);
const allowedConstants = new Set(['pi', 'PI', 'e', 'E', 'tau', 'phi', 'i', 'Infinity', 'NaN', 'true', 'false', 'LN2', 'LN10', 'LOG2E', 'LOG10E', 'SQRT2', 'SQRT1_2']);
// `to`/`in` convert units; the rest are the arithmetic and comparison operators.
const allowedOperators = new Set([
  'add', 'subtract', 'multiply', 'divide', 'dotMultiply', 'dotDivide', 'pow', 'dotPow', 'mod', 'unaryMinus', 'unaryPlus',
  'factorial', 'to', 'equal', 'unequal', 'smaller', 'larger', 'smallerEq', 'largerEq',
]);

// A private instance used only to parse: the shared default one can be changed by
// whoever else imports mathjs, and parsing never runs the expression.
const parser = create(all as FactoryFunctionMap);

/** Parses `expression` and throws a readable `CalculatorError` unless every node is plain arithmetic. */
export function checkExpression(expression: string): void {
  let root: MathNode;
  try {
    root = parser.parse(expression);
  } catch (error) {
    throw new CalculatorError('CALC_INVALID', `could not parse the expression: ${(error as Error).message}`);
  }
  root.traverse((node) => {
    const refusal = refusalFor(node);
    if (refusal) throw new CalculatorError('CALC_REFUSED', `refused: ${refusal}; only arithmetic is allowed`);
  });
}

function refusalFor(node: MathNode): string | undefined {
  switch (node.type) {
    case 'ConstantNode': {
      const value: unknown = (node as unknown as { value: unknown }).value;
      return typeof value === 'number' || typeof value === 'boolean' ? undefined : 'only numbers are allowed as constants';
    }
    case 'ParenthesisNode':
    case 'ConditionalNode':
      return undefined;
    case 'OperatorNode': {
      const fn = (node as unknown as { fn: string }).fn;
      return allowedOperators.has(fn) ? undefined : `operator "${(node as unknown as { op: string }).op}" is not allowed`;
    }
    case 'FunctionNode': {
      const fn = (node as unknown as { fn: MathNode }).fn;
      const name = fn.type === 'SymbolNode' ? (fn as unknown as { name: string }).name : undefined;
      return name !== undefined && allowedFunctions.has(name) ? undefined : `function "${name ?? fn.toString()}" is not allowed`;
    }
    case 'SymbolNode':
      return symbolRefusal((node as unknown as { name: string }).name);
    default:
      return `${node.type.replace(/Node$/, '').toLowerCase()} expressions are not allowed`;
  }
}

function symbolRefusal(name: string): string | undefined {
  // A function name is checked by its FunctionNode; traverse also visits it as a symbol.
  if (allowedFunctions.has(name) || allowedConstants.has(name)) return undefined;
  if (parser.Unit.isValuelessUnit(name)) return undefined;
  return `unknown name "${name}"`;
}
