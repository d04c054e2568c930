package exec

import "net"

type netListener = net.Listener

func listenLoopback(network string) (net.Listener, error) { return net.Listen(network, "127.0.0.1:0") }
