import * as UserStore from "../src/UserStore.js"
import { userContract } from "../test-kit/index.js"

userContract("memory", UserStore.layerMemory, { numRuns: 50 })
