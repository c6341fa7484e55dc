// Starts dynalite (npm package, Apache-2.0), the open-source DynamoDB server redeye's tests run on.
//
// Usage: node scripts/dynalite.js DYNALITE_HOME [--host H] [--port P] [dynalite options]
//   DYNALITE_HOME: the folder npm installed dynalite into (it holds node_modules/dynalite)
//   --port 0 lets the kernel pick a free port; the line "Dynalite listening at: http://HOST:PORT" says which.
//   Other options go to dynalite as its own command line would pass them (--createTableMs 0, --path DIR, ...).
//
// Why a launcher rather than dynalite's own command: its cli.js turns --port 0 into its default 4567, and
// dynalite 4 rethrows the 'aborted' error of a request whose client hung up mid-way (an SDK attempt timeout
// does exactly that) from inside a request handler, which ends the whole server. Such an error concerns one
// request only, so it is logged and the server keeps serving; any other uncaught error still ends the process.
'use strict'
const path = require('path')
const home = process.argv[2]
if (!home) {
  console.error('usage: node scripts/dynalite.js DYNALITE_HOME [--host H] [--port P] [dynalite options]')
  process.exit(2)
}
const modules = path.join(path.resolve(home), 'node_modules')
// minimist is dynalite's own dependency: resolve it from there, wherever npm placed it.
const argv = require(require.resolve('minimist', { paths: [path.join(modules, 'dynalite')] }))(process.argv.slice(3))
const dynalite = require(path.join(modules, 'dynalite'))

process.on('uncaughtException', function (err) {
  if (err && (err.code === 'ECONNRESET' || err.message === 'aborted')) {
    console.error('[redeye dynalite] a client aborted a request: ' + err.message)
    return
  }
  console.error(err)
  process.exit(1)
})

const port = argv.port === undefined ? 4567 : Number(argv.port)
const server = dynalite(argv).listen(port, argv.host || undefined, function () {
  console.log('Dynalite listening at: http://%s:%s', argv.host || 'localhost', server.address().port)
})
