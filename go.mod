module landslide

go 1.26.8
