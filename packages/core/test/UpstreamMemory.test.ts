import * as Storage from "../src/Storage.js"
import { upstreamContract } from "../test-kit/index.js"

upstreamContract("memory", Storage.layerMemory, { numRuns: 50 })
