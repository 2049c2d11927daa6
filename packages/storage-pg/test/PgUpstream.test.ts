import { upstreamContract } from "@tradeflow/core/test-kit"
import { layerTest } from "../test-kit/index.js"

upstreamContract("postgres", layerTest)
