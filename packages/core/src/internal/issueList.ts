import { type Issue, listIssues, maxIssues } from "../DownstreamError.js"

/**
 * The issues of a problem as they are found: the first {@link maxIssues} are kept, the others only
 * counted, so that a request with millions of problems holds a hundred of them.
 */
export class IssueList {
  private readonly listed: Array<Issue> = []
  private count = 0

  /** How many issues were added or skipped. */
  get total(): number {
    return this.count
  }

  /** How many more issues would be listed. */
  get room(): number {
    return maxIssues - this.listed.length
  }

  add(issue: Issue): void {
    this.count++
    if (this.listed.length < maxIssues) this.listed.push(issue)
  }

  addAll(issues: Iterable<Issue>): void {
    for (const issue of issues) this.add(issue)
  }

  /** Counts `count` issues that were found but never built (there is no {@link room} for them). */
  skip(count: number): void {
    this.count += count
  }

  /** The issues to answer: see {@link listIssues}. */
  issues(): ReadonlyArray<Issue> {
    return listIssues(this.listed, this.count)
  }
}
