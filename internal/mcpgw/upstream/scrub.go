package upstream

// scrubError cleans err of every credential a's session sent (the server
// may echo it in an error), keeping errors.Is and errors.As.
func scrubError(a *authorizer, err error) error {
	sc := a.scrubber()
	if sc == nil || err == nil {
		return err
	}
	return sc.Error(err)
}
