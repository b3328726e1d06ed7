from django.urls import re_path

from climate.dashboard.content.hosts import views

urlpatterns = [
    re_path(r'^$', views.IndexView.as_view(), name='index'),
    re_path(r'^calendar/$', views.CalendarView.as_view(), name='calendar'),
    re_path(r'^create/$', views.CreateView.as_view(), name='create'),
]
