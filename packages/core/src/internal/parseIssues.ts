import { Effect, Option, ParseResult, SchemaAST as AST } from "effect"

/**
 * One leaf of a `ParseError` as `ParseResult.ArrayFormatter` reports it: its path, tag and
 * message, except that the message of a plain type mismatch stops before its `, actual <value>`
 * (`Expected string`), which would format the whole value sent.
 */
export interface Leaf {
  readonly path: ReadonlyArray<PropertyKey>
  readonly tag: ParseResult.ParseIssue["_tag"]
  readonly message: string
}

const expectedByAst = new WeakMap<AST.AST, string>()

const expectedOf = (ast: AST.AST): string => {
  let expected = expectedByAst.get(ast)
  if (expected === undefined) {
    expected = String(ast)
    expectedByAst.set(ast, expected)
  }
  return expected
}

const hasMessage = (ast: AST.AST): boolean => Option.isSome(AST.getMessageAnnotation(ast))

/**
 * Whether the formatter reports a node by a message of its own (or of the chain of refinements
 * and transformations below it) instead of its leaves: the node's message annotation applies,
 * unless it only decorates the messages inside (a composite's, a refinement's `From` part's, a
 * transformation's `Encoded` or `Type` part's, not `override`).
 */
const messageApplies = (issue: ParseResult.ParseIssue): boolean => {
  if (!("ast" in issue) || issue._tag === "Missing") return false
  const annotation = AST.getMessageAnnotation(issue.ast)
  if (Option.isNone(annotation)) return false
  const inner = issue._tag === "Composite" || (issue._tag === "Refinement" && issue.kind === "From") ||
    (issue._tag === "Transformation" && issue.kind !== "Transformation")
  if (!inner) return true
  const current = annotation.value(issue)
  if (typeof current === "object" && !Effect.isEffect(current) && current.override) return true
  return (issue._tag === "Refinement" || issue._tag === "Transformation") && messageApplies(issue.issue)
}

const formatted = (issue: ParseResult.ParseIssue, path: ReadonlyArray<PropertyKey>, into: Array<Leaf>): void => {
  for (const f of ParseResult.ArrayFormatter.formatIssueSync(issue)) {
    into.push({ path: f.path.length === 0 ? path : path.concat(f.path), tag: f._tag, message: f.message })
  }
}

/**
 * The leaves of a parse issue, in the order and with the paths, tags and messages of
 * `ParseResult.ArrayFormatter`, found in one walk of the tree: each node is visited once. A node
 * reported by its own message (see {@link messageApplies}) is handed to the formatter, which
 * reports it without looking below it.
 */
export const leavesOf = (root: ParseResult.ParseIssue): Array<Leaf> => {
  const leaves: Array<Leaf> = []
  const walk = (
    issue: ParseResult.ParseIssue,
    parentTag: ParseResult.ParseIssue["_tag"] | undefined,
    path: ReadonlyArray<PropertyKey>
  ): void => {
    switch (issue._tag) {
      case "Pointer":
        return walk(issue.issue, undefined, path.concat(issue.path))
      case "Composite":
        if (messageApplies(issue)) return formatted(issue, path, leaves)
        if (Array.isArray(issue.issues)) {
          for (const child of issue.issues as ReadonlyArray<ParseResult.ParseIssue>) walk(child, undefined, path)
          return
        }
        return walk(issue.issues as ParseResult.ParseIssue, undefined, path)
      case "Refinement":
        if (messageApplies(issue)) return formatted(issue, path, leaves)
        return walk(issue.issue, issue.kind === "Predicate" ? "Refinement" : undefined, path)
      case "Transformation":
        if (messageApplies(issue)) return formatted(issue, path, leaves)
        return walk(issue.issue, issue.kind === "Transformation" ? "Transformation" : undefined, path)
      case "Type": {
        const tag = parentTag ?? "Type"
        const plain = tag === "Type" && issue.message === undefined && !AST.isRefinement(issue.ast) &&
          !hasMessage(issue.ast) && Option.isNone(AST.getParseIssueTitleAnnotation(issue.ast))
        const message = plain
          ? `Expected ${expectedOf(issue.ast)}`
          : ParseResult.ArrayFormatter.formatIssueSync(issue)[0]?.message ?? ""
        leaves.push({ path, tag, message })
        return
      }
      case "Missing":
      case "Unexpected":
      case "Forbidden":
        return formatted(issue, path, leaves)
    }
  }
  walk(root, undefined, [])
  return leaves
}
