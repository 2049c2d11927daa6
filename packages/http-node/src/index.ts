/**
 * @tradeflow/http-node: the HTTP API of the tradeflow service on @effect/platform-node. Each
 * module is exported as a namespace.
 *
 * @module @tradeflow/http-node
 */
export * as Api from "./Api.js"
export * as Authentication from "./Authentication.js"
export * as HttpApp from "./HttpApp.js"
export * as HttpConfig from "./HttpConfig.js"
export * as HttpMetrics from "./HttpMetrics.js"
export * as HttpMount from "./HttpMount.js"
export * as Problem from "./Problem.js"
export * as SmtpMailer from "./SmtpMailer.js"
