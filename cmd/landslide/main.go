// Command landslide is the model checker's command line; the commands live
// in package cli.
package main

import "landslide/cli"

func main() { cli.Run() }
